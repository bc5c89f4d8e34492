// Placeholder; the KernelTest fixture lands with the runtime.
