"""agents/offline"""
