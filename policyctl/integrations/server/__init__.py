"""The decision server (`policyctl serve`): the hosts' decisions over HTTP, for a fleet.

app        the Starlette application: routes, error pages (`build_app`)
service    what every route shares: settings, token check, body and time caps, decision log
requests   the request bodies (strict models) and the structured 4xx errors
decide     /v1/decide and /v1/resolve answers, with `hosts.handler`'s decision code
hookroute  /v1/hooks/{host}: a host's hook payload, answered by `hosts.handler.handle`
authzen    OpenID AuthZEN 1.0: /access/v1/evaluation(s), /.well-known/authzen-configuration
state      the policy snapshot a request answers from; a hot-reloaded file source
sources    which source `--policy` names
bundlepoll a signed bundle pulled from a URL: ETags, verification, kept on disk
metrics    the Prometheus metrics
logs       the JSON-lines decision log
"""
