cd /tmp/fcm
{ date -u; uptime; } > apt-after.env
/usr/bin/time -v -o apt-after.time chroot base-new bash /root/install-deps-after.sh sample > apt-after.log 2>&1
uptime >> apt-after.env; date -u >> apt-after.env
umount base-new/proc
echo done > apt-after.DONE
