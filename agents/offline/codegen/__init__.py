"""agents/offline/codegen"""
