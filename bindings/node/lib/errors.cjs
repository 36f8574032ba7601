"use strict";
// The two exceptions of the package (python-binding.md §2).

/** Programmer or configuration errors, and boxes that never started. */
class SandboxError extends Error {
	/** @param {string} message @param {{cause?: unknown}} [options] */
	constructor(message, options) {
		super(message, options);
		this.name = "SandboxError";
	}
}

/** A mount (or tmpfs) the binding refuses, even when asked for. */
class MountRefused extends SandboxError {
	/** @param {string} message @param {{cause?: unknown}} [options] */
	constructor(message, options) {
		super(message, options);
		this.name = "MountRefused";
	}
}

/**
 * Throw the signal's reason (an AbortError by default) if it was aborted.
 * @param {AbortSignal | undefined} signal
 */
function throwIfAborted(signal) {
	if (signal && signal.aborted) {
		throw signal.reason ?? Object.assign(new Error("This operation was aborted"), { name: "AbortError" });
	}
}

module.exports = { SandboxError, MountRefused, throwIfAborted };
