full_checks() { :; }
