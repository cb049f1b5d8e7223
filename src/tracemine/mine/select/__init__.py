"""Which candidates a tool keeps: prices, the false-alarm budget, implied links and
descriptions."""
