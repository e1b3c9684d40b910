"""Analysis: questions asked of a compiled policy across many runs.

validate, checks, call_checks, call_cover, shadowing, reach   `policyctl validate`
matrix, matrixwalk                                            `policyctl matrix`, and
                                                              validate's walk of contexts
diff, call_diff, probes, revision                             `policyctl diff`
testing, testnames, call_corpus, contextspec                  `policyctl test`, `simulate`
"""
