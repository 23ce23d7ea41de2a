print("altbeacond: not yet")
