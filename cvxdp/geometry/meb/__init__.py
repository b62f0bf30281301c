"""Minimum enclosing ball (Mahpud & Sheffet): exact, fPTAS and differentially private."""
