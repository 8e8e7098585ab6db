"""Pure tests: settings, validators, core facts and the domains' builders, called without the mock engine."""
