cd /tmp/fcm
P="g++ cmake ninja-build pkg-config libsqlite3-dev libsimdjson-dev libdeflate-dev zlib1g-dev libzstd-dev libre2-dev libfmt-dev libcli11-dev"
{ date -u; uptime; } > apt-split.env
/usr/bin/time -f "update wall %e s, cpu %U+%S s" -a -o apt-split.txt chroot base-new2 apt-get update -qq
/usr/bin/time -f "download wall %e s, cpu %U+%S s" -a -o apt-split.txt chroot base-new2 env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends --download-only $P > apt-split.log 2>&1
du -sb base-new2/var/cache/apt/archives >> apt-split.txt
/usr/bin/time -f "install wall %e s, cpu %U+%S s" -a -o apt-split.txt chroot base-new2 env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $P >> apt-split.log 2>&1
{ uptime; date -u; } >> apt-split.env
umount base-new2/proc; echo done > apt-split.DONE
