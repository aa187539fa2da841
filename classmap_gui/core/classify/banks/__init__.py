"""The classifier banks: one-vs-all (:mod:`.ova`), all-pairs (:mod:`.allpairs`) and compressive
(:mod:`.compressive_bank` over :mod:`.compressive`), what they share (:mod:`.base`, :mod:`.solvers`), the ridge
bank from sufficient statistics (:mod:`.ridge_moments`) and the numpy ranking an export inlines
(:mod:`.ranking_ops`)."""
