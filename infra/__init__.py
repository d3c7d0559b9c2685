"""Deployment: the resources merged into Chalice's SAM template, the IAM policies, LocalStack and AWS deploys.

`definitions` holds every resource setting once; `build` renders it into the
merge template and `.chalice/policy-*.json`, `localstack` creates the same
data plane through the AWS APIs, `deploy` ships a packaged stage to AWS.
"""
