"""ClassMap (Athitsos et al., ICCV 2007): the estimator (:mod:`.estimator`), how it is fitted (:mod:`.boost`,
:mod:`.sampled` at 10^5 classes), how it predicts (:mod:`.predict`, :mod:`.refine`, :mod:`.single_query`), what it
reads of a bank (:mod:`.bank_view`) and its numpy reference (:mod:`.ops`, which an export inlines and the tests
hold the compiled kernels to)."""
