"""agents/bench"""
