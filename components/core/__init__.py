"""Pure facts shared by two or more parts of the platform; never imports Pulumi.

The floor the rest stands on: the settings layer (`components.config`) validates against these facts
(the VM catalog, taints, quantities, quota arithmetic) and derives pool facts with them, and every
domain component builds its objects from them, so two layers cannot disagree about a name, a taint, a
GPU count or a version.
"""
