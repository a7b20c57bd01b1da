"""Side-by-side benchmarks: mirkit kernels against their anchor libraries (``mirkit bench``)."""
