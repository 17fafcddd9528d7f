"""Private building blocks of the DRS policy (Liu and Shen, CloudCom 2016; spec section 2).

- :mod:`.dag`: per-job DAG helpers (remaining critical path, independent sibling sets);
- :mod:`.ilp`: the resource-cost ILP (eqs. 3-11 as corrected), solved with HiGHS;
- :mod:`.greedy`: the greedy counterpart of the ILP (spec 2.3.3 selection rule);
- :mod:`.predictor`: Algorithm 3 (mutual reinforcement) and the queue-length predictor;
- :mod:`.gossip`: scheduler domains, managers gossiping over a geometric random graph,
  and Algorithm 1 job routing.
"""
