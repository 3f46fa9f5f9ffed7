"""The folders of the vendor libraries (cuDNN, cuBLAS) that PyTorch loads into a process.

Records are for the device and the library versions they were measured with (the target
fingerprint). PyTorch loads its own cuDNN and cuBLAS (from its nvidia-* wheels), and
libopsched.so then uses those, so a process with torch is another target than
`opsched tune` run from a shell. Tune with these folders first on the library path:

    LD_LIBRARY_PATH="$(python3 -m opsched.vendor_libs):$LD_LIBRARY_PATH" opsched tune --suite ...
"""

import sys


def loaded_vendor_dirs(names=("libcudnn", "libcublas")):
    """The folders, in first-seen order, of the shared libraries whose file names start
    with one of `names` and that this process has loaded (Linux: /proc/self/maps)."""
    dirs = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1] if "/" in line else ""
            base = path.rsplit("/", 1)[-1]
            if base.startswith(names) and ".so" in base:
                folder = path.rsplit("/", 1)[0]
                if folder not in dirs:
                    dirs.append(folder)
    return dirs


def torch_vendor_dirs():
    """The folders of the cuDNN and cuBLAS that torch loads (both are loaded first)."""
    import torch

    if torch.cuda.is_available():
        torch.backends.cudnn.version()  # loads cuDNN
        a = torch.ones(2, 2, device="cuda")
        (a @ a).sum().item()            # loads cuBLAS
    return loaded_vendor_dirs()


def main():
    try:
        dirs = torch_vendor_dirs()
    except ImportError as e:
        print(f"opsched.vendor_libs: {e}", file=sys.stderr)
        return 1
    print(":".join(dirs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
