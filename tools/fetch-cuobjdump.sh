#!/usr/bin/env bash
# Fetches cuobjdump and nvdisasm (for the SASS checks: tensor-core and
# 128-bit load instructions in what ptxas makes of axle's PTX) on a machine
# whose CUDA install has ptxas only.
#
#   bash tools/fetch-cuobjdump.sh [BUILD]        (make fetch-cuobjdump)
#   bash tools/fetch-cuobjdump.sh --version
#
# They come from Debian's non-free nvidia-cuda-toolkit package: apt-get
# downloads it through a temporary sources list and lists directory (the
# machine's apt configuration is not changed), dpkg-deb extracts the two
# programs into BUILD/tools/cuda/debian, and BUILD/tools/cuda/bin/cuobjdump
# is a wrapper that tests/unit/tool_files.h's tool_find looks for.
#
# Why a wrapper: Debian's toolkit (11.8) is older than the ptxas here
# (CUDA 13), whose cubins are ELF ABI version 8 (OS/ABI 0x41, the SM number
# in bits 8-15 of e_flags); the old cuobjdump reads the SM from bits 0-7
# and rejects them ("Support for 'sm_4' has been removed"). The wrapper
# copies each .cubin argument with the header written the old way (OS/ABI
# 0x33, ABI version 7, e_flags = SM | 0x500 | SM << 16) and runs the real
# cuobjdump on the copy. The instructions themselves are untouched.
#
# Exit 0 when BUILD/tools/cuda/bin/cuobjdump works (or already did); 1 with
# a message otherwise. Callers treat a failure as "the SASS checks skip".
set -u
cd "$(dirname "$0")/.." || exit 1
if [ "${1:-}" = --version ]; then
  echo "fetch-cuobjdump $(sed -n 's/^#define AXLE_VERSION_[A-Z]* \([0-9]*\).*/\1/p' include/axle.h | paste -sd.)"; exit 0
fi
BUILD=${1:-${BUILD:-build}}
dest=$BUILD/tools/cuda
wrapper=$dest/bin/cuobjdump
if [ -x "$wrapper" ] && [ -x "$dest/debian/usr/bin/nvdisasm" ]; then
  echo "fetch-cuobjdump: already in $dest"; exit 0
fi
command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null ||
  { echo "fetch-cuobjdump: needs apt-get and dpkg-deb (Debian); the SASS checks will skip"; exit 1; }
. /etc/os-release 2>/dev/null
suite=${VERSION_CODENAME:-bookworm}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial"
echo "deb [signed-by=$keyring] http://deb.debian.org/debian $suite contrib non-free" >"$tmp/sources.list"
apt_opts=(-o "Dir::Etc::sourcelist=$tmp/sources.list" -o "Dir::Etc::sourceparts=$tmp/none"
          -o "Dir::State::lists=$tmp/lists" -o "Dir::Cache=$tmp/cache" -o Debug::NoLocking=1
          -o APT::Sandbox::User=root)
if ! apt-get "${apt_opts[@]}" -qq update >"$tmp/log" 2>&1; then
  echo "fetch-cuobjdump: apt-get update failed; the SASS checks will skip"; tail -3 "$tmp/log"; exit 1
fi
if ! (cd "$tmp" && apt-get "${apt_opts[@]}" -qq download nvidia-cuda-toolkit >"$tmp/log" 2>&1); then
  echo "fetch-cuobjdump: cannot download nvidia-cuda-toolkit; the SASS checks will skip"; tail -3 "$tmp/log"; exit 1
fi
rm -rf "$dest"; mkdir -p "$dest/debian" "$dest/bin"
if ! dpkg-deb --fsys-tarfile "$tmp"/nvidia-cuda-toolkit_*.deb |
     tar -x -C "$dest/debian" ./usr/bin/cuobjdump ./usr/bin/nvdisasm; then
  echo "fetch-cuobjdump: the package lacks usr/bin/cuobjdump or nvdisasm"; rm -rf "$dest"; exit 1
fi
cat >"$wrapper" <<'EOF'
#!/usr/bin/env bash
# cuobjdump from Debian's CUDA 11.8 on cubins from a newer ptxas: each
# .cubin argument is copied with its ELF header in the old ABI (see
# tools/fetch-cuobjdump.sh), then the real cuobjdump reads the copy.
here=$(cd "$(dirname "$0")/.." && pwd)
real=$here/debian/usr/bin
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
args=(); n=0
for a in "$@"; do
  if [[ $a == *.cubin && -f $a ]]; then
    n=$((n + 1)); copy=$tmp/$n.cubin; cp "$a" "$copy"
    abi=$(od -An -tu1 -j7 -N2 "$copy" | tr -s ' ')
    if [ "$abi" = " 65 8" ]; then  # OS/ABI 0x41, ABI version 8
      sm=$(od -An -tu1 -j49 -N1 "$copy" | tr -d ' ')
      printf "$(printf '\\%03o\\%03o' 51 7)" | dd of="$copy" bs=1 seek=7 conv=notrunc status=none
      printf "$(printf '\\%03o\\%03o\\%03o\\%03o' "$sm" 5 "$sm" 0)" | dd of="$copy" bs=1 seek=48 conv=notrunc status=none
    fi
    a=$copy
  fi
  args+=("$a")
done
PATH=$real:$PATH "$real/cuobjdump" "${args[@]}"
EOF
chmod +x "$wrapper"
if ! "$wrapper" --version >/dev/null 2>&1; then
  echo "fetch-cuobjdump: $wrapper does not run"; exit 1
fi
echo "fetch-cuobjdump: cuobjdump and nvdisasm (Debian $suite nvidia-cuda-toolkit) in $dest"
