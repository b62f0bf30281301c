"""How user-facing text cites the papers: authors, year and title (never a file name).

One constant per paper (``<authors> (<year>), <title>``) and one per theorem that a record,
report, message or status reason states (the paper's constant plus the theorem).  Code and
messages take their citations from here, so a theorem is cited by the same words everywhere.
"""

from __future__ import annotations

__all__ = [
    "ZCDP_TO_DP",
    "ZCDP_COMPOSITION",
    "POST_PROCESSING",
    "LAPLACE_MECHANISM",
    "DWORK_ROTH_2014",
    "DWORK_MCSHERRY_NISSIM_SMITH_2006",
    "CANONNE_KAMATH_STEINKE_2020",
    "BASIC_COMPOSITION",
    "ANALYTIC_GAUSSIAN",
    "ASHTIANI_LIAW_2022",
    "BALLE_WANG_2018",
    "BUN_STEINKE_2016",
    "DONG_ROTH_SU_2022",
    "EJA_GAUSSIAN",
    "GAUSSIAN_MECHANISM",
    "GDP_COMPOSITION",
    "GDP_GAUSSIAN",
    "GDP_TO_DP",
    "GU_ET_AL_2024",
    "JOHN_ELLIPSOID",
    "LEARNING_GAUSSIANS",
    "LU_ET_AL_2024",
    "MAHPUD_SHEFFET_2022",
    "MINIMUM_ENCLOSING_BALL",
    "NDIS",
    "SCP_CONSTRAINT_PRIVACY",
    "SCP_OBJECTIVE_PRIVACY",
    "SCP_SCALAR_PRIVACY",
    "SONG_XUE_ZHANG_2025",
    "SYMMETRIC_CONE_PROGRAMMING",
    "ZCDP_GAUSSIAN",
    "cite",
]


def cite(paper: str, where: str) -> str:
    """``"<authors (year), title>, <where>"``, e.g. ``cite(SYMMETRIC_CONE_PROGRAMMING,
    "Alg. 1, Thm C.9")``."""
    return f"{paper}, {where}"


# ---- papers --------------------------------------------------------------------------------

#: The Euclidean Jordan algebra Gaussian mechanism and private symmetric cone programs.
SONG_XUE_ZHANG_2025 = (
    "Song, Xue & Zhang (2025), Differential Privacy for Euclidean Jordan Algebra with "
    "Applications to Private Symmetric Cone Programming")
SYMMETRIC_CONE_PROGRAMMING = SONG_XUE_ZHANG_2025

#: The private John ellipsoid (Algorithm 1, Fast DP-JE).
GU_ET_AL_2024 = (
    "Gu, Li, Liang, Shi, Song & Yu (2024), Fast John Ellipsoid Computation with Differential "
    "Privacy Optimization")
JOHN_ELLIPSOID = GU_ET_AL_2024

#: The private minimum enclosing ball (DP-MMEB, GoodCenter).
MAHPUD_SHEFFET_2022 = (
    "Mahpud & Sheffet (2022), A Differentially Private Linear-Time fPTAS for the Minimum "
    "Enclosing Ball Problem")
MINIMUM_ENCLOSING_BALL = MAHPUD_SHEFFET_2022

#: NDIS, the random projection and least-squares mechanisms.
LU_ET_AL_2024 = (
    "Lu, Magdon-Ismail, Wei & Zikas (2024), The Normal Distributions Indistinguishability "
    "Spectrum and its Application to Privacy-Preserving Machine Learning")
NDIS = LU_ET_AL_2024

#: The masking reduction and the private Gaussian learner.
ASHTIANI_LIAW_2022 = (
    "Ashtiani & Liaw (2022), Private and Polynomial Time Algorithms for Learning Gaussians and "
    "Beyond")
LEARNING_GAUSSIANS = ASHTIANI_LIAW_2022

BALLE_WANG_2018 = (
    "Balle & Wang (2018), Improving the Gaussian Mechanism for Differential Privacy: Analytical "
    "Calibration and Optimal Denoising")
BUN_STEINKE_2016 = (
    "Bun & Steinke (2016), Concentrated Differential Privacy: Simplifications, Extensions, and "
    "Lower Bounds")
DONG_ROTH_SU_2022 = "Dong, Roth & Su (2022), Gaussian Differential Privacy"
DWORK_ROTH_2014 = "Dwork & Roth (2014), The Algorithmic Foundations of Differential Privacy"
DWORK_MCSHERRY_NISSIM_SMITH_2006 = (
    "Dwork, McSherry, Nissim & Smith (2006), Calibrating Noise to Sensitivity in Private Data "
    "Analysis")
CANONNE_KAMATH_STEINKE_2020 = (
    "Canonne, Kamath & Steinke (2020), The Discrete Gaussian for Differential Privacy")


# ---- theorems ------------------------------------------------------------------------------

#: sigma for (epsilon, delta) exactly: the analytic Gaussian mechanism.
ANALYTIC_GAUSSIAN = cite(BALLE_WANG_2018, "Thm 8 (analytic Gaussian mechanism)")
#: N(0, sigma^2 I) on a value of l2 sensitivity D is D^2 / (2 sigma^2)-zCDP.
ZCDP_GAUSSIAN = cite(BUN_STEINKE_2016, "Prop. 1.6 (Gaussian mechanism in zCDP)")
#: Both statements of a Gaussian step's record: its (epsilon, delta) and its zCDP bound.
GAUSSIAN_MECHANISM = f"{ANALYTIC_GAUSSIAN}; {ZCDP_GAUSSIAN}"
#: N(0, sigma^2 I) on a value of l2 sensitivity D is exactly (D / sigma)-Gaussian DP.
GDP_GAUSSIAN = cite(DONG_ROTH_SU_2022, "Thm 2.7 (Gaussian mechanism in Gaussian DP)")
#: Adaptive Gaussian steps compose exactly: mu = sqrt(sum_k mu_k^2).
GDP_COMPOSITION = cite(DONG_ROTH_SU_2022, "Cor. 3.3 (composition of Gaussian DP)")
#: mu-GDP is (epsilon, delta(epsilon))-DP for every epsilon, with the Gaussian delta curve.
GDP_TO_DP = cite(DONG_ROTH_SU_2022, "Cor. 2.13 (Gaussian DP as (epsilon, delta)-DP)")
#: Private symmetric cone programs, constraint privacy (the MWU solver).
SCP_CONSTRAINT_PRIVACY = cite(SYMMETRIC_CONE_PROGRAMMING,
                              "Alg 1, Thm C.7 (privacy), Thm C.9 (utility)")
#: Private symmetric cone programs, scalar privacy.
SCP_SCALAR_PRIVACY = cite(SYMMETRIC_CONE_PROGRAMMING, "Alg 5, Thm C.2, Lemma C.4, Thm C.5")
#: Private symmetric cone programs, objective privacy (Gaussian on c).
SCP_OBJECTIVE_PRIVACY = cite(SYMMETRIC_CONE_PROGRAMMING,
                             "Thm C.12 (objective privacy), Lemma 4.2 / Cor 4.4")
#: The Gaussian mechanism on a Euclidean Jordan algebra.
EJA_GAUSSIAN = cite(SYMMETRIC_CONE_PROGRAMMING, "Lemma 4.2 (Gaussian mechanism on an EJA)")
#: rho-zCDP steps compose by adding rho.
ZCDP_COMPOSITION = cite(BUN_STEINKE_2016, "Lemma 2.3 (composition of zCDP)")
#: rho-zCDP as (epsilon, delta)-DP (the CKS conversion).
ZCDP_TO_DP = cite(CANONNE_KAMATH_STEINKE_2020, "Cor. 13 (zCDP as (epsilon, delta)-DP)")
#: (epsilon_k, delta_k)-DP steps compose by adding both.
BASIC_COMPOSITION = cite(DWORK_ROTH_2014, "Thm 3.16 (basic composition)")
#: Anything computed from a DP release (and public data) keeps its guarantee.
POST_PROCESSING = cite(DWORK_ROTH_2014, "Prop. 2.1 (post-processing)")
#: Laplace(D / epsilon) noise on a value of l1 sensitivity D is epsilon-DP.
LAPLACE_MECHANISM = cite(DWORK_MCSHERRY_NISSIM_SMITH_2006, "the Laplace mechanism")
