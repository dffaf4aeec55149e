"""agents/core"""
