cd /tmp/fcm
P="g++ cmake ninja-build pkg-config libsqlite3-dev libsimdjson-dev libdeflate-dev zlib1g-dev libzstd-dev libre2-dev libfmt-dev libcli11-dev"
{ date -u; uptime; } > apt-unsafe.env
/usr/bin/time -f "install (debs cached, --force-unsafe-io) wall %e s, cpu %U+%S s" -a -o apt-unsafe.txt chroot base-new3 env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends -o Dpkg::Options::=--force-unsafe-io $P > apt-unsafe.log 2>&1
{ uptime; date -u; } >> apt-unsafe.env
umount base-new3/proc; echo done > apt-unsafe.DONE
