"""What templates read (a fold's context) and what they propose and count."""
