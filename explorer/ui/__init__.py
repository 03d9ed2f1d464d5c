"""Qt views: they show what the core computed and never compute it themselves."""
