cd /tmp/fcm
{ date -u; uptime; } > apt-before.env
/usr/bin/time -v -o apt-before.time chroot base-old bash /root/install-deps-before.sh > apt-before.log 2>&1
uptime >> apt-before.env; date -u >> apt-before.env
umount base-old/proc
echo done > apt-before.DONE
