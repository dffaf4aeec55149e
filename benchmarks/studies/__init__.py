"""benchmarks/studies"""
