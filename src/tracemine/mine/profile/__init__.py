"""What is read from the store and summed before anything is proposed: the nominal calls, the
path survey, per-task profiles and value listings."""
