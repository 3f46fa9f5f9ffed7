set terminal svg size 1000,520 dynamic font "sans,11"
set output "docs/results/nvidia-h100/conv/speedups.svg"
set title "opsched bench on NVIDIA H100 80GB HBM3: tuned choice per workload"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set ylabel "ratio"
set yrange [0:*]
set xtics rotate by -45 scale 0
set key top left
set grid ytics
plot "docs/results/nvidia-h100/conv/speedups.dat" using 2:xtic(4) title "speedup over heuristic", "" using 3 title "oracle / tuned (1 = best measured)", 1 with lines dashtype 2 lc rgb "#444444" notitle
