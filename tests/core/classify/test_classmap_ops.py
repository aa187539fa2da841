"""ClassMap's refine steps in numpy (:mod:`classmap_gui.core.classify.classmap.ops`), which the app's sampled
refine and the exported predict.py run: the v3 stop rule against its definition."""
import numpy as np

from classmap_gui.core.classify.classmap.ops import rank_by_response


def v3_evaluated(resp: np.ndarray, t: float) -> int:
    """The paper's v3 (first-above-threshold) from its definition: the candidates in filter order up to and
    including the first whose response reaches ``t``; all of them when none does."""
    hits = np.flatnonzero(resp >= t)
    return int(hits[0]) + 1 if hits.size else len(resp)


def test_v3_scores_the_candidates_up_to_the_first_reaching_the_threshold():
    """Issue 46: stopping one candidate early or late (or at > t instead of >= t) changes which classes are
    scored, and so the class a person is shown."""
    rng = np.random.default_rng(46)
    m, t = 10, np.float32(0.5)
    rows = [np.full(m, 0.1, np.float32), np.full(m, 0.9, np.float32)]        # none reach t; the first does
    for k in (0, 1, 4, m - 2, m - 1):
        r = np.full(m, 0.1, np.float32)
        r[k] = t                                                            # exactly the threshold: reached
        r[k + 1:] = 0.9                                                     # later ones would win if scored
        rows.append(r)
    rows += [rng.uniform(-1, 1, m).astype(np.float32) for _ in range(40)]
    R = np.stack(rows)
    cands = np.stack([rng.permutation(50)[:m] for _ in rows]).astype(np.int64)
    cls, score, done = rank_by_response(R, cands, float(t))
    for i, resp in enumerate(R):
        n = v3_evaluated(resp, t)
        assert done[i].tolist() == [True] * n + [False] * (m - n), resp
        assert np.isnan(score[i]).sum() == m - n                            # the rest follow unscored
        assert cls[i, 0] == cands[i, int(np.argmax(resp[:n]))] and score[i, 0] == resp[:n].max()
        assert cls[i, n:].tolist() == cands[i, n:].tolist()                 # in filter order
    # v2 (no threshold): every candidate scored, best first
    cls, score, done = rank_by_response(R, cands, None)
    assert done.all() and not np.isnan(score).any()
    assert (cls[:, 0] == cands[np.arange(len(R)), R.argmax(1)]).all()
