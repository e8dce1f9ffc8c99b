"""Speed measurements; a package so tests can import the naive reference implementations kept here."""
