"""The numba engine: state layout, kernels, policies, the parallel driver and the trace."""
