#!/usr/bin/env python3
"""Build OCI image layouts for the pull tests from a directory tree.

  mkimage.py busybox OUT           ~1 MB busybox image (busybox-static), tag
                                   "latest"; OUT-user: the same with User,
                                   Entrypoint, Cmd, WorkingDir set; OUT-multi: an index with
                                   linux/amd64, linux/arm64, linux/s390x and
                                   an attestation entry (unknown/unknown)
  mkimage.py rootfs OUT DIR [--cmd JSON] [--env K=V]...
                                   one-layer image of DIR (e.g. debootstrap)

Layers are deterministic tars (sorted, uid/gid 0, mtime kept, devices
dropped) compressed with gzip; the image config carries Env, Cmd,
Entrypoint, WorkingDir and User so the tests can check they are applied.
"""
import gzip
import hashlib
import io
import json
import os
import shutil
import stat
import sys
import tarfile

BUSYBOX = "/bin/busybox"
APPLETS = ["sh", "ls", "cat", "echo", "id", "env", "pwd", "true", "false", "sleep", "mkdir",
           "touch", "rm", "stat", "test", "wc", "head", "whoami", "uname", "grep"]


def blob(layout, data):
    d = "sha256:" + hashlib.sha256(data).hexdigest()
    path = os.path.join(layout, "blobs", "sha256", d[7:])
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    return {"digest": d, "size": len(data)}


def tar_tree(root):
    """A deterministic tar of the tree at root (paths relative, ./ form)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            rel = os.path.relpath(dirpath, root)
            for name in [None] + sorted(filenames) + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
                if name is None:
                    if rel == ".":
                        continue
                    path, arc = dirpath, rel
                else:
                    path, arc = os.path.join(dirpath, name), os.path.normpath(os.path.join(rel, name))
                st = os.lstat(path)
                if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) or stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode):
                    continue
                ti = t.gettarinfo(path, arc)
                ti.uid = ti.gid = 0
                ti.uname = ti.gname = "root"
                if ti.isreg():
                    with open(path, "rb") as f:
                        t.addfile(ti, f)
                else:
                    t.addfile(ti)
    return buf.getvalue()


def layer(layout, tar):
    gz = gzip.compress(tar, compresslevel=6, mtime=0)
    desc = blob(layout, gz)
    desc["mediaType"] = "application/vnd.oci.image.layer.v1.tar+gzip"
    return desc, "sha256:" + hashlib.sha256(tar).hexdigest()


def image(layout, layers, cfg, arch="amd64"):
    config = {
        "architecture": arch, "os": "linux",
        "config": cfg,
        "rootfs": {"type": "layers", "diff_ids": [d for _, d in layers]},
        "history": [{"created_by": "kern tests/helpers/mkimage.py"}],
    }
    cdesc = blob(layout, json.dumps(config, sort_keys=True).encode())
    cdesc["mediaType"] = "application/vnd.oci.image.config.v1+json"
    manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "config": cdesc, "layers": [l for l, _ in layers]}
    mdesc = blob(layout, json.dumps(manifest, sort_keys=True).encode())
    mdesc["mediaType"] = "application/vnd.oci.image.manifest.v1+json"
    return mdesc


def write_index(layout, manifests):
    with open(os.path.join(layout, "oci-layout"), "w") as f:
        json.dump({"imageLayoutVersion": "1.0.0"}, f)
    with open(os.path.join(layout, "index.json"), "w") as f:
        json.dump({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                   "manifests": manifests}, f, sort_keys=True)


def busybox_tree(tmp):
    root = os.path.join(tmp, "rootfs")
    for d in ["bin", "etc", "tmp", "root", "home/app", "work"]:
        os.makedirs(os.path.join(root, d), exist_ok=True)
    os.chmod(os.path.join(root, "tmp"), 0o1777)
    shutil.copy(BUSYBOX, os.path.join(root, "bin/busybox"))
    for a in APPLETS:
        os.symlink("busybox", os.path.join(root, "bin", a))
    with open(os.path.join(root, "etc/passwd"), "w") as f:
        f.write("root:x:0:0:root:/root:/bin/sh\napp:x:1000:1000:app:/home/app:/bin/sh\n")
    with open(os.path.join(root, "etc/group"), "w") as f:
        f.write("root:x:0:\napp:x:1000:\n")
    with open(os.path.join(root, "etc/kern-fixture"), "w") as f:
        f.write("busybox fixture\n")
    return root


BUSYBOX_CFG = {"Env": ["PATH=/bin", "FIXTURE=busybox", "TAB=a\tb"], "Cmd": ["/bin/sh"],
               "WorkingDir": "/work", "ExposedPorts": {"8080/tcp": {}}}


def main():
    cmd, out = sys.argv[1], sys.argv[2]
    tmp = out + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    if cmd == "busybox":
        tar = tar_tree(busybox_tree(tmp))
        layout = os.path.join(tmp, "layout")
        l = layer(layout, tar)
        m = image(layout, [l], BUSYBOX_CFG)
        m["annotations"] = {"org.opencontainers.image.ref.name": "latest"}
        write_index(layout, [m])
        multi = os.path.join(tmp, "multi")
        entries = []
        for arch in ["amd64", "arm64", "s390x"]:
            lm = layer(multi, tar)
            cfg = dict(BUSYBOX_CFG, Env=BUSYBOX_CFG["Env"] + ["FIXTURE_ARCH=" + arch])
            d = image(multi, [lm], cfg, arch)
            d["platform"] = {"os": "linux", "architecture": arch}
            entries.append(d)
        att = blob(multi, b'{"attestation": true}')
        att_cfg = blob(multi, b"{}")
        am = blob(multi, json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                                     "config": dict(att_cfg, mediaType="application/vnd.oci.empty.v1+json"),
                                     "layers": [dict(att, mediaType="application/vnd.in-toto+json")]}).encode())
        am["mediaType"] = "application/vnd.oci.image.manifest.v1+json"
        am["platform"] = {"os": "unknown", "architecture": "unknown"}
        entries.append(am)
        idx = blob(multi, json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                                      "manifests": entries}, sort_keys=True).encode())
        idx["mediaType"] = "application/vnd.oci.image.index.v1+json"
        idx["annotations"] = {"org.opencontainers.image.ref.name": "latest"}
        write_index(multi, [idx])
        # An image whose config sets User, Entrypoint, Cmd and WorkingDir.
        user = os.path.join(tmp, "user")
        lu = layer(user, tar)
        mu = image(user, [lu], {"Env": ["PATH=/bin", "FIXTURE=user"], "User": "app",
                                "Entrypoint": ["/bin/echo", "from-entrypoint"], "Cmd": ["default-cmd"],
                                "WorkingDir": "/home/app"})
        mu["annotations"] = {"org.opencontainers.image.ref.name": "latest"}
        write_index(user, [mu])
        for suffix in ("", "-multi", "-user"):
            shutil.rmtree(out + suffix, ignore_errors=True)
        os.rename(layout, out)
        os.rename(multi, out + "-multi")
        os.rename(user, out + "-user")
    elif cmd == "rootfs":
        src = sys.argv[3]
        cfg = {"Env": ["PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"], "Cmd": ["python3"]}
        args = sys.argv[4:]
        while args:
            if args[0] == "--cmd":
                cfg["Cmd"] = json.loads(args[1])
            elif args[0] == "--env":
                cfg["Env"].append(args[1])
            args = args[2:]
        layout = os.path.join(tmp, "layout")
        l = layer(layout, tar_tree(src))
        m = image(layout, [l], cfg)
        m["annotations"] = {"org.opencontainers.image.ref.name": "latest"}
        write_index(layout, [m])
        shutil.rmtree(out, ignore_errors=True)
        os.rename(layout, out)
    else:
        sys.exit("usage: mkimage.py busybox OUT | rootfs OUT DIR")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
