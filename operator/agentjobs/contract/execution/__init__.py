"""An Execution's plan and status from its Phases (R23-R27), resumes (R48), clean-up."""
