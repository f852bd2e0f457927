"""Graph encoders (Graph Transformer, GAT, GCN) and per-graph mean pooling.

Layer layout follows the reference: conv(in -> hidden), then (layers - 2) x conv(hidden -> hidden), then
conv(hidden -> out); every conv but the last is followed by batch norm, ReLU and dropout. The graph transformer
splits its width over the heads and concatenates them; GAT averages its heads (concat=False). Edge text
embeddings feed the transformer and GAT attention (edge_dim = embedder width); GCN has no use for them.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch_geometric.nn import GATConv, GCNConv, TransformerConv
from torch_geometric.utils import scatter

from ..errors import ConfigError


class TolerantBatchNorm(nn.BatchNorm1d):
    """Batch norm that falls back to its running statistics when a training batch has fewer than two rows.

    Plain batch norm refuses to train on a single node (the variance is undefined), and a batch made of one
    one-node graph is a legal input.
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training and x.shape[0] < 2:
            return F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                                False, 0.0, self.eps)
        return super().forward(x)


class GraphEncoder(nn.Module):
    """Node embeddings from node and edge features: forward(x, edge_index, edge_attr) -> [N, out_dim]."""

    def __init__(self, kind: str, *, in_dim: int, hidden: int, out_dim: int, layers: int, heads: int,
                 dropout: float = 0.0):
        super().__init__()
        if layers < 1:
            raise ConfigError(f"field 'gnn_layers': a graph encoder needs at least one layer, got {layers}")
        self.kind = kind
        self.in_dim = in_dim
        self.out_dim = out_dim
        self.dropout = dropout
        widths = [in_dim] + [hidden] * (layers - 1) + [out_dim]
        self.convs = nn.ModuleList(_make_conv(kind, w_in, w_out, heads=heads, edge_dim=in_dim, dropout=dropout)
                                   for w_in, w_out in zip(widths[:-1], widths[1:]))
        self.norms = nn.ModuleList(TolerantBatchNorm(hidden) for _ in range(layers - 1))

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor, edge_attr: torch.Tensor | None) -> torch.Tensor:
        for index, conv in enumerate(self.convs):
            x = self._apply_conv(conv, x, edge_index, edge_attr)
            if index < len(self.norms):
                x = self.norms[index](x)
                x = F.relu(x)
                x = F.dropout(x, p=self.dropout, training=self.training)
        return x

    def _apply_conv(self, conv: nn.Module, x: torch.Tensor, edge_index: torch.Tensor,
                    edge_attr: torch.Tensor | None) -> torch.Tensor:
        if self.kind == "gcn":
            return conv(x, edge_index)
        return conv(x, edge_index, edge_attr=edge_attr)


def build_graph_encoder(kind: str, *, in_dim: int, hidden: int, out_dim: int, layers: int, heads: int,
                        dropout: float = 0.0) -> GraphEncoder:
    if kind == "graph-transformer" and out_dim % heads:
        raise ConfigError(f"the graph transformer's output width {out_dim} is not a multiple of its {heads} heads; "
                          f"change gnn_heads")
    return GraphEncoder(kind, in_dim=in_dim, hidden=hidden, out_dim=out_dim, layers=layers, heads=heads,
                        dropout=dropout)


def mean_pool(node_embeddings: torch.Tensor, graph_of_node: torch.Tensor, num_graphs: int) -> torch.Tensor:
    """[num_graphs, d] means of each graph's node embeddings; rows of graphs without nodes are zero."""
    if node_embeddings.shape[0] == 0:
        return node_embeddings.new_zeros(num_graphs, node_embeddings.shape[-1])
    return scatter(node_embeddings, graph_of_node, dim=0, dim_size=num_graphs, reduce="mean")


def _make_conv(kind: str, w_in: int, w_out: int, *, heads: int, edge_dim: int, dropout: float) -> nn.Module:
    if kind == "graph-transformer":
        return TransformerConv(w_in, w_out // heads, heads=heads, edge_dim=edge_dim, dropout=dropout)
    if kind == "gat":
        return GATConv(w_in, w_out, heads=heads, concat=False, edge_dim=edge_dim)
    if kind == "gcn":
        return GCNConv(w_in, w_out)
    raise ConfigError(f"unknown graph encoder {kind!r}")
