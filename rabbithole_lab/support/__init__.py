"""What every layer shares and no layer owns: progress, cache folders, text made safe and short for display."""
