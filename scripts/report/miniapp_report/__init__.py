"""The mini-app's report and advisor (`miniapp report`, `miniapp advise`)."""
