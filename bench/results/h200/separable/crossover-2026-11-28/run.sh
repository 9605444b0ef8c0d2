nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
P=.gpu/crossover_probe
$P same f32 512x512,1024x1024,2048x2048,3840x2160,4096x4096,8192x8192 > $OUT/same-f32.csv 2>&1
$P valid f32 1024x1024,4096x4096,8192x8192 > $OUT/valid-f32.csv 2>&1
$P same f16f32 512x512,1024x1024,4096x4096 > $OUT/same-f16f32.csv 2>&1
$P same f16 1024x1024,4096x4096 > $OUT/same-f16.csv 2>&1
date -u >> $OUT/device.txt
wc -l $OUT/*.csv
