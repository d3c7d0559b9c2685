"""A fake OpenStack on one HTTP server: Keystone v3, Nova 2.61 and Limes, from a scenario file.

See fakes/openstack/scenario.py for the scenario format and faults, and
`python -m fakes.openstack --scenario FILE --port N` to run it on its own.
"""

from fakes.openstack.scenario import Fault, Scenario, load_scenario
from fakes.openstack.server import FakeOpenStack

__all__ = ["FakeOpenStack", "Fault", "Scenario", "load_scenario"]
