nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
mkdir -p $OUT/r
for rep in 1 2; do for k in 3 7 15 31 35 39 47 63 95 127 193; do for v in old new; do echo "$v $(.gpu/probe_$v $k 4096 cuda-cores)"; done; done; done > $OUT/r/times4096.txt 2>&1
for k in 31 63 127; do for v in old new; do echo "$v $(.gpu/probe_$v $k 8192 cuda-cores)"; done; done > $OUT/r/times8192.txt 2>&1
for s in 0 1 2 3 4 5 6 7; do .gpu/probe_new check cuda-cores $s 8 > $OUT/r/check-$s.txt 2>&1 & done; wait
tail -n 3 $OUT/r/check-*.txt | grep -v "^$"
date -u >> $OUT/device.txt
cat $OUT/r/times*.txt
