export HALCONV_WISDOM=/nonexistent
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
timeout 150 .gpu/halconv_bench --report recursive --sizes 4096,8192,3840x2160 --csv $OUT/recursive.csv > $OUT/recursive.log 2>&1
timeout 120 .gpu/halconv_bench --report separable --sizes 4096,8192,3840x2160 --kernels 255,511,1023,2047 --csv $OUT/separable-long.csv > $OUT/separable-long.log 2>&1
date -u >> $OUT/device.txt
grep -v "^#" $OUT/recursive.log | tail -25; grep halconv_separable $OUT/separable-long.log
