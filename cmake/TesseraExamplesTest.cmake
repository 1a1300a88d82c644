# Registered below once the examples exist.
