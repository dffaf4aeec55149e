"""benchmarks/harness"""
