#!/bin/bash
# Alternates fresh clones of main (before) and the unity branch (after): run-sample.sh with no
# compiler cache, /usr/bin/time; two rounds.
for r in 1 2; do
  for who in before after; do
    rev=e8c78cdcc68f23784b1d9604688a75f25ae86e78; [ $who = after ] && rev=$(git -C /work/main rev-parse unity)
    d=/tmp/fcm/$who$r; rm -rf $d; git clone -q /work/main $d; git -C $d checkout -q $rev
    cd $d
    CCACHE_DISABLE=1 /usr/bin/time -f "$who round $r: %e s wall, %U user, %S sys, %M KB" bash scripts/run-sample.sh > $d.out 2> $d.err
    tail -1 $d.err; grep -c "" build-sample/.ninja_log
    cd /tmp/fcm
  done
done
