"""John ellipsoid of a symmetric polytope (Gu et al.): exact, fast and differentially private."""
