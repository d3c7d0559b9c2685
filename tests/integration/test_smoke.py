from tests.support import factories as f


def test_report_then_read_allocation(api):
    assert api.post("/api/resource-provisioning/events", {"events": [f.binding_event("b1", "wproj-1")]},
                    key="service").body == {"applied": 1, "ignored": 0}
    answer = api.post("/resource-provisioning/k8s/reports", f.report(), key="k8s")
    assert answer.status == 200
    assert answer.body["lifecycle"] == "ready"
    got = api.get(f"/resource-provisioning/k8s/allocations/{answer.body['allocationId']}", key="k8s")
    assert got.status == 200 and got.body["revision"] == 1
