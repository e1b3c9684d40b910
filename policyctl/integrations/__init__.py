"""Where policyctl's decision meets agents it does not run itself: host hook adapters,
gateways and in-process adapters for other agent loops (`integrations.nanobot`)."""
