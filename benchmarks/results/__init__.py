"""benchmarks/results"""
