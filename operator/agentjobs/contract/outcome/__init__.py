"""The one outcome a phase ends with, and how much of its status fits (R36, R57)."""
