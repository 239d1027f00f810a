"""Prints where `make install` puts the axle package for PREFIX (argv[1]):
PREFIX's site-packages as this Python lays them out. Debian and its
derivatives keep the packages of /usr in /usr/lib/python3/dist-packages and
those of other prefixes in PREFIX/lib/python3.X/dist-packages; other
systems use PREFIX/lib/python3.X/site-packages."""
import sys
import sysconfig

prefix = sys.argv[1].rstrip("/") or "/"
paths = {"base": prefix, "platbase": prefix}
if "deb_system" in sysconfig.get_scheme_names():
    if prefix == "/usr":
        print(sysconfig.get_path("purelib", "deb_system", vars=paths))
    else:
        print(sysconfig.get_path("purelib", "posix_prefix", vars=paths).replace("site-packages", "dist-packages"))
else:
    print(sysconfig.get_path("purelib", "posix_prefix", vars=paths))
