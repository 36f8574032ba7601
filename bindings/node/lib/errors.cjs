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

module.exports = { SandboxError, MountRefused };
