#!/usr/bin/env python3
"""Model check of the session-noise widening of `vernier compare` (docs/compare.md, "Sessions").

Simulates log run times `b + e` with a session effect `b ~ N(0, tau^2)` and run noise
`e ~ N(0, sigma^2)`: a calibration of K sessions of n runs (session medians, McKean-Schrader
standard errors, the ANOVA estimate of tau^2 with K - 1 df), then pairs of single sessions,
A/A and with a planted 10% change. The runs' interval is Welch's t interval on the logs
(a stand-in for Moses' interval, of about the same width for normal data) around the
Hodges-Lehmann shift; the calibrated interval widens it by 2 tau^2 with Satterthwaite's df.
Prints the share of false verdicts (A/A) and of detected planted changes, runs-only against
calibrated, at a 2% threshold. Machine-independent: it checks the rule, not this machine
(bench/aa-check.sh measures that).

Usage: python3 bench/session-noise-sim.py [TRIALS]   (needs numpy and scipy; seeded)
"""
import sys

import numpy as np
from scipy import stats

rng=np.random.default_rng(1)
z=stats.norm.ppf(0.975); z99=stats.norm.ppf(0.995)
def mse(x):
    y=np.sort(x); n=len(y); c=max(int(round((n+1)/2-z99*np.sqrt(n/4))),1)
    return (y[n-c]-y[c-1])/(2*z99)
def trial(tau,sigma,n,K,t,plant):
    # calibration
    meds=[];vs=[]
    for _ in range(K):
        x=rng.normal(rng.normal(0,tau),sigma,n); meds.append(np.median(x)); vs.append(mse(x)**2)
    ms=np.var(meds,ddof=1); tau2=max(0,ms-np.mean(vs)); df=K-1
    a=rng.normal(rng.normal(0,tau),sigma,n); b=rng.normal(rng.normal(0,tau),sigma,n)+np.log1p(plant)
    d=np.median(b[:,None]-a[None,:])  # HL
    w=stats.ttest_ind(b,a,equal_var=False).confidence_interval(0.95)
    half=(w.high-w.low)/2; se=half/z
    out=[]
    for V in (0.0, 2*tau2):
        if V>0:
            tot=se*se+V; dft=tot*tot/(V*V/df); h=stats.t.ppf(0.975,dft)*np.sqrt(tot)
        else: h=half
        lo,hi=d-h,d+h; L=np.log1p(t)
        out.append(1 if lo>L else (-1 if hi<-L else 0))
    return out
for tau,sigma in [(0.01,0.01),(0.02,0.01),(0.03,0.02)]:
    N=int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    r=np.array([trial(tau,sigma,10,5,0.02,0.0) for _ in range(N)])
    p=np.array([trial(tau,sigma,10,5,0.02,0.10) for _ in range(N)])
    print(f"tau {tau} sigma {sigma}: A/A false verdicts runs-only {np.mean(r[:,0]!=0):.1%}, calibrated {np.mean(r[:,1]!=0):.1%}; power 10%: runs-only {np.mean(p[:,0]==1):.1%}, calibrated {np.mean(p[:,1]==1):.1%}")
