"""Where to put one depot: a private 1-centre of GPS points (minimum enclosing ball, DP-MEB).

Each point is one customer's home location (private). The depot's location and the radius it must
serve are released. Neighbours: one customer's location replaced by any other location (the
guarantee of DP-MEB is replace-one, with n public). The map box is public knowledge.

Run:  python examples/gps_one_centre.py [--quick]
"""

import argparse

import numpy as np

import cvxdp

parser = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--quick", action="store_true", help="smaller sizes (seconds)")
quick = parser.parse_args().quick
rng = np.random.default_rng(0)
n = 20000 if quick else 200000
# a city: homes spread over a 6 km x 6 km square around (2, 1) in a public 20 km box
homes = rng.uniform(-3, 3, (n, 2)) + np.array([2.0, 1.0])

prob = cvxdp.min_enclosing_ball(homes)
sol = prob.solve_private(epsilon=1.0, delta=1e-6, accuracy=0.2, bounds=(-10.0, 10.0), rng=1,
                         reference=True)
v = sol.validation
print(f"private depot {np.round(sol.ball.center, 3)}, service radius {sol.ball.radius:.3f} km")
print(f"radius / exact radius: {v.radius_ratio:.3f}; homes outside: {v.uncovered} of {n}")
print(f"time private {sol.solve_time:.2f}s vs exact reference ({v.reference_solver}) "
      f"{v.reference_time:.2f}s")
print(f"privacy: {sol.privacy.guarantee}, epsilon={sol.privacy.epsilon:.3g}, "
      f"rho={sol.privacy.rho:.3g}; {sol.privacy.neighbouring}")
