"""The whole program per stack file on the mock engine (run once per session), its reports and the policy pack."""
